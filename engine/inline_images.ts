/**
 * Inline images kept with a message's recorded content, so that the content view can show the HTML's `cid:`
 * images (as `data:` URIs in the dashboard's sandboxed frame) without keeping attachments. Bounded: an e-mail's
 * inline images (logos, icons, a banner) are mostly well under 100 KB each; the bounds keep the recorded content of
 * a message with many or large ones to a few parts of the content store, whatever was attached.
 */

/** Decoded bytes of one inline image kept: 256 KB. A larger one is described, not kept. */
export const INLINE_IMAGE_MAX_BYTES = 256 * 1024
/** Decoded bytes of all inline images kept per message: 1 MB. Images past it (in message order) are described only. */
export const INLINE_IMAGES_MAX_BYTES = 1024 * 1024
/**
 * Raster types a browser shows in an `<img>`; SVG is left out (a document format, not needed to read a message).
 * Matched on the type without parameters, lower-cased.
 */
const SHOWN_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

/** What is left of one message's inline-image budget, taken image by image in message order. */
export class InlineImageBudget {
  private left = INLINE_IMAGES_MAX_BYTES

  /** Whether an attachment is an inline image that fits: it has a Content-ID, a shown type, and its size fits. */
  fits (a: { content_id: string | null, content_type: string }, size: number): boolean {
    if (a.content_id === null || a.content_id === '') return false
    if (!SHOWN_TYPES.has(a.content_type.split(';')[0]!.trim().toLowerCase())) return false
    return size <= INLINE_IMAGE_MAX_BYTES && size <= this.left
  }

  /** Counts an image kept. */
  take (size: number): void {
    this.left -= size
  }
}
