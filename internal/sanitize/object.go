package sanitize

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Object is the document written for a live object: Document(Clean(u.Object)).
func Object(u *unstructured.Unstructured) ([]byte, error) {
	r, err := Render(u)
	return r.Doc, err
}

// Rendered is what the watch keeps of a live object's content: the document written for it
// and the Shape of what the document holds.
type Rendered struct {
	Doc   []byte
	Shape Shape
}

// Render is Object with the shape of the cleaned object, learned from the object already
// decoded rather than from the document parsed again.
func Render(u *unstructured.Unstructured) (Rendered, error) {
	if u == nil || u.Object == nil {
		return Rendered{}, errors.New("render document: object is nil")
	}
	cleaned := Clean(u.Object)
	doc, err := Document(cleaned)
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{Doc: doc, Shape: ShapeOf(cleaned)}, nil
}
