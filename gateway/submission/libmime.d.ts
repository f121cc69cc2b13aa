// libmime ships no types; these are the functions the submission server uses.
declare module 'libmime' {
  const libmime: {
    /** Decodes RFC 2047 encoded words (`=?UTF-8?B?…?=`) in a header value; text outside them is kept. */
    decodeWords: (value: string) => string
  }
  export default libmime
}
