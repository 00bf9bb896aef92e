// Package kubescheme builds the runtime scheme every client of the operator uses.
package kubescheme

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	v1alpha1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// New returns a scheme with the built-in kinds and the gitops-reverser.io kinds.
func New() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add client-go kinds: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add gitops-reverser.io kinds: %w", err)
	}
	return scheme, nil
}
