package pipeline

import (
	"context"
	"slices"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/sanitize"
	"github.com/gitops-reverser/gitops-reverser/internal/secrets"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// pipelineReducer tells the worker what to write for an object whose document is in Git
// already: for a sealed Secret, the existing file when its plaintext digest and recipients
// are unchanged (no new ciphertext for an unchanged Secret); for everything else, the live
// document without the server defaults its source omits
// (docs/sanitize.md#server-defaults-are-not-edits).
type pipelineReducer struct {
	defaults worker.Reducer
}

func (p pipelineReducer) Reduce(ctx context.Context, typ layout.TypeInfo, source, live []byte) ([]byte, error) {
	if digest, sealed := secrets.DigestOf(live); sealed {
		if sameSealed(source, live, digest) {
			return source, nil
		}
		return live, nil // a sealed document is never dry-run: that would need its plaintext
	}
	if p.defaults == nil {
		return live, nil
	}
	return p.defaults.Reduce(ctx, typ, source, live)
}

// Minimal returns the smallest document of an object with none in Git
// (docs/sanitize.md#minimal-documents); a sealed Secret's document is written as it is.
func (p pipelineReducer) Minimal(ctx context.Context, typ layout.TypeInfo, live []byte, shape sanitize.Shape) ([]byte, error) {
	if _, sealed := secrets.DigestOf(live); sealed || p.defaults == nil {
		return live, nil
	}
	return p.defaults.Minimal(ctx, typ, live, shape)
}

func sameSealed(source, live []byte, liveDigest string) bool {
	digest, ok := secrets.DigestOf(source)
	if !ok || digest != liveDigest {
		return false
	}
	was, ok1 := secrets.RecipientsOf(source)
	now, ok2 := secrets.RecipientsOf(live)
	if !ok1 || !ok2 {
		return false
	}
	slices.Sort(was)
	slices.Sort(now)
	return slices.Equal(was, now)
}
