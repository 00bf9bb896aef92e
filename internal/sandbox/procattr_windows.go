package sandbox

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
