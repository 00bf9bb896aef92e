package loopback

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
)

// reserve binds the abstract Unix socket "@gitops-reverser-port-<port>": only one socket
// of the machine (its network namespace) can hold that name. The descriptor is raw and
// deliberately never closed, so no finalizer closes it either: the kernel releases the name
// when the process exits, whichever way it exits.
func reserve(port int) (bool, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("reserve loopback port %d: %w", port, err)
	}
	err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: "@gitops-reverser-port-" + strconv.Itoa(port)})
	if err != nil {
		_ = syscall.Close(fd)
		if errors.Is(err, syscall.EADDRINUSE) {
			return false, nil
		}
		return false, fmt.Errorf("reserve loopback port %d: %w", port, err)
	}
	return true, nil
}
