package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ApplicationReference names an Argo CD Application.
type ApplicationReference struct {
	// Name of the Application.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Application, often Argo CD's own (argocd); defaults to the
	// ArgoCDTrigger's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// ArgoCDTriggerSpec names the Argo CD Application that applies a GitTarget's folder.
type ArgoCDTriggerSpec struct {
	// ApplicationRef names the Application. Its source must follow the GitTarget's branch
	// (spec.source.targetRevision).
	ApplicationRef ApplicationReference `json:"applicationRef"`
}

// ArgoCDTriggerStatus reports the applies asked of Argo CD.
type ArgoCDTriggerStatus struct {
	CommonStatus `json:",inline"`

	// LastRequestedRevision is the commit the operator last asked Argo CD to sync.
	// +optional
	LastRequestedRevision string `json:"lastRequestedRevision,omitempty"`

	// LastAppliedRevision is the commit Argo CD last reported synced.
	// +optional
	LastAppliedRevision string `json:"lastAppliedRevision,omitempty"`
}

// ArgoCDTrigger lets the operator ask an Argo CD Application to sync an exact commit of the
// branch it writes, so that the two do not fight over the folder (docs/two-way.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="Application",type=string,JSONPath=`.spec.applicationRef.name`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.lastAppliedRevision`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ArgoCDTrigger struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the Application.
	Spec ArgoCDTriggerSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status ArgoCDTriggerStatus `json:"status,omitempty"`
}

// ArgoCDTriggerList is a list of ArgoCDTriggers.
//
// +kubebuilder:object:root=true
type ArgoCDTriggerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ArgoCDTrigger `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ArgoCDTrigger{}, &ArgoCDTriggerList{})
}
