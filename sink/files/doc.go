// Package files is the file sink (sink.Sink, sink.Location): output files
// in a local folder or under an S3 prefix. Output is staged under the
// location's _tidemark/staging/<run>/ on local disks, and on S3 uploaded
// before the commit to its final keys as multipart uploads left
// incomplete, which publishing completes; the first file of a sink goes up
// while the engine writes it (tail.go). Its job-file block is Config,
// registered with the job package as the default sink kind (a block
// without connection:).
package files
