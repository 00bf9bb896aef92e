package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KustomizationReference names a Flux Kustomization.
type KustomizationReference struct {
	// Name of the Kustomization.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Kustomization; defaults to the FluxTrigger's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// FluxTriggerSpec names the Flux Kustomization that applies a GitTarget's folder; its
// spec.sourceRef names the GitRepository the operator asks to fetch the commit first.
type FluxTriggerSpec struct {
	// KustomizationRef names the Kustomization.
	KustomizationRef KustomizationReference `json:"kustomizationRef"`
}

// FluxTriggerStatus reports the applies asked of Flux.
type FluxTriggerStatus struct {
	CommonStatus `json:",inline"`

	// LastRequestedRevision is the commit the operator last asked Flux to apply.
	// +optional
	LastRequestedRevision string `json:"lastRequestedRevision,omitempty"`

	// LastAppliedRevision is the commit Flux last reported applied.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`
}

// FluxTrigger lets the operator ask a Flux Kustomization to apply an exact commit of the
// branch it writes, so that the two do not fight over the folder (docs/two-way.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="Kustomization",type=string,JSONPath=`.spec.kustomizationRef.name`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.lastAppliedRevision`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FluxTrigger struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the Kustomization.
	Spec FluxTriggerSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status FluxTriggerStatus `json:"status,omitempty"`
}

// FluxTriggerList is a list of FluxTriggers.
//
// +kubebuilder:object:root=true
type FluxTriggerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FluxTrigger `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FluxTrigger{}, &FluxTriggerList{})
}
