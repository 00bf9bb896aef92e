package sanitize

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is the document written for a live object: Document(Clean(u.Object)).
func Object(u *unstructured.Unstructured) ([]byte, error) {
	if u == nil || u.Object == nil {
		return nil, errors.New("render document: object is nil")
	}
	return Document(Clean(u.Object))
}
