// Package files is the file source: files in a local folder or under an
// S3 prefix, listed and diffed against the source's bookmark (exact
// identities or Glue's timestamp band). Its job-file block is Config,
// registered with the job package as the default source kind (a block
// without connection:).
package files
