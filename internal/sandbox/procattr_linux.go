package sandbox

import "syscall"

// childProcAttr puts the operator in its own process group and has the kernel send it
// SIGTERM should the sandbox process die without stopping it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
