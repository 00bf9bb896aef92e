//go:build !linux && !windows

package sandbox

import "syscall"

// childProcAttr puts the operator in its own process group.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
