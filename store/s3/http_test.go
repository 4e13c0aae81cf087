package s3

import "net/http"

type (
	httpRequest  = http.Request
	httpResponse = http.Response
)

// Do calls f.
func (f httpFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
