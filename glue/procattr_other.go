//go:build !linux

package glue

import "os/exec"

// dieWithParent does nothing here: only Linux signals a child when its
// parent dies.
func dieWithParent(cmd *exec.Cmd) {}
