// Package files is the file sink: output files in a local folder or under
// an S3 prefix, staged under the sink's _tidemark/ folder and published
// after the state commit. Its job-file block is Config, registered with the
// job package as the default sink kind (a block without connection:).
package files
