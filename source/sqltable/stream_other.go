//go:build !unix

package sqltable

import (
	"errors"
	"os"
)

const pipesWork = false

func makePipe(string) error { return errors.New("no named pipes on this platform") }

func openPipeReader(string) (*os.File, error) {
	return nil, errors.New("no named pipes on this platform")
}

func growPipe(*os.File) {}
