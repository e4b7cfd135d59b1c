//go:build linux

package transport

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setProcGroup puts the child in a process group of its own, so a signal
// sent to rpcload's terminal (Ctrl-C) does not reach it directly: rpcload
// decides when and how it ends.
func setProcGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalChild sends sig to the child's process group (its id is the child's
// pid), so the child's own children get it too. If the group is gone it
// falls back to the child alone.
func signalChild(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if err == nil || !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return p.Signal(sig)
}

// exitStatus describes how a process ended: "exit status 1", or "killed by
// signal SIGSEGV (core dumped)".
func exitStatus(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ps.String()
	}
	s := "killed by signal " + signalName(ws.Signal())
	if ws.CoreDump() {
		s += " (core dumped)"
	}
	return s
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}
