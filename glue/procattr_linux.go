package glue

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the script get SIGTERM when this process dies, even by
// kill -9: an orphaned script would go on running its Spark, holding
// memory and writing into a run that can no longer commit.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
