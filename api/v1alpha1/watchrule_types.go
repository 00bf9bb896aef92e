package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Operation is a kind of change a rule reacts to.
// +kubebuilder:validation:Enum=CREATE;UPDATE;DELETE;"*"
type Operation string

// ResourceRule selects resources to mirror.
type ResourceRule struct {
	// APIGroups of the resources; "" is the core group and "*" every group.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	APIGroups []string `json:"apiGroups,omitempty"`

	// APIVersions of the resources; "*" or empty means the preferred version.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	APIVersions []string `json:"apiVersions,omitempty"`

	// Resources are plural resource names (configmaps) or "*". Subresources
	// (deployments/scale) are refused: name the parent resource.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(r, !r.contains('/'))",message="rules may not name subresources (a resource containing '/'); name the parent resource instead"
	Resources []string `json:"resources"`

	// Operations the rule mirrors: CREATE, UPDATE, DELETE or "*" (the default).
	// +optional
	// +kubebuilder:validation:MaxItems=4
	Operations []Operation `json:"operations,omitempty"`

	// LabelSelector limits the rule to objects whose labels match.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// WatchRuleSpec selects namespaced resources of the rule's namespace for a GitTarget.
type WatchRuleSpec struct {
	// TargetRef names the GitTarget, in this namespace, that receives the objects.
	TargetRef LocalObjectReference `json:"targetRef"`

	// Rules select the resources to mirror.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Rules []ResourceRule `json:"rules"`

	// ServiceAccountName is a service account of the rule's namespace whose rights the rule
	// has: a resource that account may not list and watch in this namespace is not
	// mirrored, and the rule says so (reason Forbidden). Without it the operator's
	// --default-service-account applies when set, and otherwise the operator's own rights.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// ConditionAuthorized is set on a WatchRule with a service account (its own or the
// operator's --default-service-account): False with reason Forbidden names each resource
// that account may not list and watch, which is then not mirrored.
const ConditionAuthorized = "Authorized"

// WatchRuleStatus reports whether the rule's resources resolved.
type WatchRuleStatus struct {
	CommonStatus `json:",inline"`
}

// WatchRule mirrors namespaced objects of its own namespace into a GitTarget.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WatchRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec selects what to mirror.
	Spec WatchRuleSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status WatchRuleStatus `json:"status,omitempty"`
}

// WatchRuleList is a list of WatchRules.
//
// +kubebuilder:object:root=true
type WatchRuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WatchRule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WatchRule{}, &WatchRuleList{})
}
