package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionPrintsTheBuildVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"version"}, &out, &errOut); code != 0 {
		t.Fatalf("version exited %d", code)
	}
	if strings.TrimSpace(out.String()) != version {
		t.Fatalf("version printed %q, want %q", out.String(), version)
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"quickstrat"}, &out, &errOut); code != 2 {
		t.Fatalf("unknown command exited %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `unknown command "quickstrat"`) || !strings.Contains(errOut.String(), "Usage:") {
		t.Fatalf("unknown command message = %q", errOut.String())
	}
}

func TestRunRefusesAttributionFlagsUntilAttributionExists(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"run", "--audit-insecure"}, &out, &errOut); code != 2 {
		t.Fatalf("run with --audit-insecure exited %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "attribution") {
		t.Fatalf("the refusal does not say why: %q", errOut.String())
	}
}
