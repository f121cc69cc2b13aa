/** What a list response keeps for its envelope (`{"data":[…],"has_more":…,"next_cursor":…}`) beside its items. */
export const LIST_ENVELOPE_BYTES = 1024;
/**
 * The bytes a list response may still take (OB_API_LIST_MAX_BYTES less its envelope). `take(item)` counts `item` as
 * JSON when it fits and says whether it did; the first item always fits, so a page is never empty for want of room
 * (the settings make sure every item fits alone). A page stops at the first item that does not fit, and its cursor
 * points after the last item taken, so the next page begins with that one.
 */
export class ListBudget {
    left;
    taken = 0;
    constructor(maxBytes) {
        this.left = maxBytes - LIST_ENVELOPE_BYTES;
    }
    take(item) {
        const n = Buffer.byteLength(JSON.stringify(item)) + 1; // and its comma
        if (this.taken > 0 && n > this.left)
            return false;
        this.left -= n;
        this.taken++;
        return true;
    }
}
/** How many of `items`, from the first, fit in a list response of at most `maxBytes`. */
export function itemsWithin(items, maxBytes) {
    const budget = new ListBudget(maxBytes);
    let n = 0;
    while (n < items.length && budget.take(items[n]))
        n++;
    return n;
}
//# sourceMappingURL=list_budget.js.map