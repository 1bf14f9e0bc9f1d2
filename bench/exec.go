package bench

import (
	"os/exec"
	"syscall"
)

var sigterm = syscall.SIGTERM

func execCommand(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
