package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseQuickstartExit(t *testing.T) {
	for in, want := range map[string]bool{"": false, " ": false, "0": false, "false": false, "1": true, "true": true, " 1 ": true} {
		got, err := parseQuickstartExit(in)
		if err != nil || got != want {
			t.Errorf("parseQuickstartExit(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseQuickstartExit("yes please"); err == nil || !strings.Contains(err.Error(), "QUICKSTART_EXIT") {
		t.Errorf("an unreadable QUICKSTART_EXIT is not refused by name: %v", err)
	}
}

func TestQuickstartRefusesBadInputBeforeStartingAnything(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"quickstart", "now"}, &out, &errOut); code != 2 {
		t.Errorf("quickstart with an argument exited %d, want 2", code)
	}
	t.Setenv("QUICKSTART_EXIT", "maybe")
	errOut.Reset()
	if code := dispatch([]string{"quickstart"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "QUICKSTART_EXIT") {
		t.Errorf("QUICKSTART_EXIT=maybe exited %d: %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("refused input still printed: %q", out.String())
	}
}

func TestQuickstartHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"quickstart", "-h"}, &out, &errOut); code != 0 {
		t.Errorf("quickstart -h exited %d", code)
	}
	if !strings.Contains(errOut.String(), "QUICKSTART_EXIT=1") {
		t.Errorf("quickstart -h does not explain QUICKSTART_EXIT: %q", errOut.String())
	}
	out.Reset()
	dispatch([]string{"help"}, &out, &errOut)
	if !strings.Contains(out.String(), "gitops-reverser quickstart") {
		t.Errorf("the usage does not list quickstart: %q", out.String())
	}
}
