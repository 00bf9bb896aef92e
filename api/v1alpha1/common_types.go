package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types shared by every kind. Ready follows the kstatus convention, with
// Reconciling and Stalled as its companions.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
)

// LocalObjectReference names an object in the same namespace as the referrer.
type LocalObjectReference struct {
	// Name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// NamespaceMatcher selects namespaces by name or by label. A namespace matches when it is
// listed in Namespaces or its labels match NamespaceSelector.
type NamespaceMatcher struct {
	// Namespaces lists namespaces by name.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`

	// NamespaceSelector selects namespaces by their labels. An empty selector ({}) matches
	// every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// CommonStatus is the status every kind of this API reports.
type CommonStatus struct {
	// ObservedGeneration is the metadata.generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions describe the state of the object: Ready (with Reconciling and Stalled, as
	// kstatus expects) and the kind's own conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
