package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterResourceRule selects cluster-scoped resources, or namespaced resources across the
// namespaces its NamespaceSelector matches.
type ClusterResourceRule struct {
	ResourceRule `json:",inline"`

	// NamespaceSelector, for namespaced resources, selects the namespaces whose objects
	// are mirrored. Without it the rule applies to cluster-scoped resources only.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// NamespacedObjectReference names an object in a given namespace.
type NamespacedObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// ClusterWatchRuleSpec selects resources across the cluster for a GitTarget.
type ClusterWatchRuleSpec struct {
	// TargetRef names the GitTarget that receives the objects.
	TargetRef NamespacedObjectReference `json:"targetRef"`

	// Rules select the resources to mirror.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Rules []ClusterResourceRule `json:"rules"`
}

// ClusterWatchRuleStatus reports whether the rule's resources resolved.
type ClusterWatchRuleStatus struct {
	CommonStatus `json:",inline"`
}

// ClusterWatchRule mirrors cluster-scoped objects, and namespaced objects across selected
// namespaces, into a GitTarget.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=gitops-reverser
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterWatchRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec selects what to mirror.
	Spec ClusterWatchRuleSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status ClusterWatchRuleStatus `json:"status,omitempty"`
}

// ClusterWatchRuleList is a list of ClusterWatchRules.
//
// +kubebuilder:object:root=true
type ClusterWatchRuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterWatchRule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterWatchRule{}, &ClusterWatchRuleList{})
}
