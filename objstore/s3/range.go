package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tidemark-etl/tidemark/objstore"
)

var _ objstore.RangeReader = (*Store)(nil)

// ReadRange reads at most n bytes of key from off with one ranged GET; a
// range past the end reads nothing.
func (s *Store) ReadRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))})
	if err != nil {
		if isRangeNotSatisfiable(err) {
			return nil, nil
		}
		return nil, s.wrap("GetObject", s.key(key), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, n))
	if err != nil {
		return nil, s.wrap("GetObject", s.key(key), err)
	}
	return b, nil
}

// isRangeNotSatisfiable reports a 416: a range that starts past the end
// (an empty object).
func isRangeNotSatisfiable(err error) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusRequestedRangeNotSatisfiable
}
