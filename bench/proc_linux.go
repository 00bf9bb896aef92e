//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// operatorProc is one run of the operator as a child process, exactly as it runs out of
// cluster: `gitops-reverser run --kubeconfig ... --work-dir ...`.
type operatorProc struct {
	cmd     *exec.Cmd
	log     string
	workDir string
	started time.Time
	done    chan struct{}
	waitErr error
	// peak is VmHWM (peak resident set) read just before the stop signal, in bytes;
	// maxRSS is the kernel's ru_maxrss after exit, in bytes (see peakRSS).
	peak, maxRSS int64
	// anon and file are RssAnon and RssFile just before the stop signal, in bytes: the
	// heap and stacks, and the pages of the binary (and other mapped files) now resident.
	anon, file int64
}

// startOperator starts argv (the operator binary and `run`, or the profiled operator) with
// the standard flags. The process gets its own process group and SIGTERM when the bench's
// thread that started it dies.
//
// With viaEnv the kubeconfig is passed as $KUBECONFIG instead of --kubeconfig, which makes
// the operator load it through controller-runtime's GetConfig (as it does in a cluster)
// rather than through clientcmd directly; the two differ in their client-side rate limit.
func startOperator(argv []string, kubeconfig string, viaEnv bool, workDir, logPath string) (*operatorProc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := append([]string{}, argv[1:]...)
	if !viaEnv {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	args = append(args,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "0",
		"--work-dir", workDir,
	)
	cmd := exec.Command(argv[0], args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = os.Environ()
	if viaEnv {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	p := &operatorProc{cmd: cmd, log: logPath, workDir: workDir, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the operator: %w", err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		if st := cmd.ProcessState; st != nil {
			if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
				p.maxRSS = ru.Maxrss * 1024 // KiB on Linux
			}
		}
		close(p.done)
	}()
	return p, nil
}

// exited reports an early exit as an error with the log's tail.
func (p *operatorProc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("the operator exited early (%v); %s ends with:\n%s", p.waitErr, p.log, logTail(p.log, 15))
	default:
		return nil
	}
}

// stop reads the peak RSS, sends SIGTERM (SIGKILL after 30s) and waits for the exit.
func (p *operatorProc) stop() error {
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
	}
	if hwm, err := procStatusBytes(p.cmd.Process.Pid, "VmHWM"); err == nil {
		p.peak = hwm
	}
	p.anon, _ = procStatusBytes(p.cmd.Process.Pid, "RssAnon")
	p.file, _ = procStatusBytes(p.cmd.Process.Pid, "RssFile")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("the operator did not stop within 30s of SIGTERM and was killed")
	}
}

// peakRSS is the operator's peak resident set in bytes: VmHWM, the peak of the memory the
// operator's program mapped since its exec. ru_maxrss is only the fallback when the process
// had exited before VmHWM could be read: Linux records in it, at exec, the peak of the
// memory the process had before (os/exec starts a child on its parent's memory, so that is
// the bench's own peak) — 108 MiB for an operator whose VmHWM was 68 MiB.
func (p *operatorProc) peakRSS() int64 {
	if p.peak > 0 {
		return p.peak
	}
	return p.maxRSS
}

// procStatusBytes reads a "kB" field of /proc/<pid>/status.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// becomeSubreaper makes this process the reaper of its orphaned descendants, so that
// anything a child leaves behind (a git process of the Git server, say) is found by
// killOrphans.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// leftoverChildren lists the pids whose parent is this process (direct children and,
// as subreaper, orphaned descendants).
func leftoverChildren() []int {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut after the last ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == self && fields[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// killOrphans stops what is left among this process's children, by pid: SIGTERM, then
// SIGKILL after a grace period, and reaps them.
func killOrphans(grace time.Duration) []int {
	left := leftoverChildren()
	if len(left) == 0 {
		return nil
	}
	for _, pid := range left {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(leftoverChildren()) > 0 {
		reapAll()
		time.Sleep(100 * time.Millisecond)
	}
	for _, pid := range leftoverChildren() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	time.Sleep(100 * time.Millisecond)
	reapAll()
	return left
}

// reapAll collects exited orphans (children the bench did not start itself).
func reapAll() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
