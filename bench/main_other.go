//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "bench: runs on Linux only (it reads /proc and watches refs with inotify)")
	os.Exit(2)
}
