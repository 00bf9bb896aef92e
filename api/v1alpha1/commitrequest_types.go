package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a CommitRequest.
const (
	ConditionPushed           = "Pushed"
	ConditionAuthorAttributed = "AuthorAttributed"
)

// CommitRequestSpec asks to commit the open window of a GitTarget now.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="CommitRequest spec is immutable; create a new CommitRequest"
type CommitRequestSpec struct {
	// TargetRef names the GitTarget, in this namespace, whose open window is committed.
	TargetRef LocalObjectReference `json:"targetRef"`

	// Message is the commit message.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// CommitRequestStatus reports the commit the request produced.
type CommitRequestStatus struct {
	CommonStatus `json:",inline"`

	// Branch the commit was pushed to.
	// +optional
	Branch string `json:"branch,omitempty"`

	// SHA is the commit as it exists on the remote, after any replay.
	// +optional
	SHA string `json:"sha,omitempty"`
}

// CommitRequest closes the open commit window of a GitTarget with a message of its own.
// It is one-shot: its spec cannot change.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetRef.name`
// +kubebuilder:printcolumn:name="SHA",type=string,JSONPath=`.status.sha`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CommitRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which target to commit and with which message.
	Spec CommitRequestSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status CommitRequestStatus `json:"status,omitempty"`
}

// CommitRequestList is a list of CommitRequests.
//
// +kubebuilder:object:root=true
type CommitRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CommitRequest `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CommitRequest{}, &CommitRequestList{})
}
