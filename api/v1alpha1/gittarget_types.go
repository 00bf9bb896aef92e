package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Condition types of a GitTarget.
const (
	ConditionValidated            = "Validated"
	ConditionGitPathAccepted      = "GitPathAccepted"
	ConditionEncryptionConfigured = "EncryptionConfigured"
	ConditionRenderMatchesLive    = "RenderMatchesLive"
	ConditionStreamsRunning       = "StreamsRunning"
)

// Reasons a GitTarget reports in its conditions.
const (
	ReasonProviderNotFound       = "ProviderNotFound"
	ReasonNamespaceNotAuthorized = "NamespaceNotAuthorized"
	ReasonBranchNotAllowed       = "BranchNotAllowed"
	ReasonTargetConflict         = "TargetConflict"
	ReasonUnsupportedContent     = "UnsupportedContent"
	ReasonWriteBoundaryRefused   = "WriteBoundaryRefused"
	ReasonRenderDoesNotMatchLive = "RenderDoesNotMatchLive"
)

// PruneMode says which deletions reach Git.
// +kubebuilder:validation:Enum=Never;OnEvent;Always
type PruneMode string

const (
	// PruneNever deletes nothing from Git.
	PruneNever PruneMode = "Never"
	// PruneOnEvent deletes a document when its object's DELETE is observed; a snapshot
	// sweep deletes nothing.
	PruneOnEvent PruneMode = "OnEvent"
	// PruneAlways deletes on a DELETE event and on a snapshot sweep.
	PruneAlways PruneMode = "Always"
)

// ApplyTriggerReference names the trigger, in the GitTarget's namespace, through which the
// operator asks a GitOps applier to apply the branch (docs/two-way.md).
type ApplyTriggerReference struct {
	// Kind of the trigger: FluxTrigger or ArgoCDTrigger.
	// +kubebuilder:validation:Enum=FluxTrigger;ArgoCDTrigger
	Kind string `json:"kind"`

	// Name of the trigger.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// RefusalPolicy says what happens to a live object whose change the folder refuses.
// +kubebuilder:validation:Enum=Ignore;Reapply
type RefusalPolicy string

const (
	// RefusalIgnore leaves the live object as it is and reports the refusal.
	RefusalIgnore RefusalPolicy = "Ignore"
	// RefusalReapply asks the applier to apply the branch again, so that the cluster goes
	// back to what Git holds.
	RefusalReapply RefusalPolicy = "Reapply"
)

// GitTargetSpec says where in which repository branch the mirror is written.
// +kubebuilder:validation:XValidation:rule="!has(self.onRefusal) || self.onRefusal != 'Reapply' || has(self.applyTriggerRef)",message="onRefusal: Reapply needs spec.applyTriggerRef: the applier that reapplies the branch"
type GitTargetSpec struct {
	// GitProviderRef names the GitProvider to write through. A GitProvider in another
	// namespace must admit this namespace in its spec.accessFrom.
	GitProviderRef GitProviderReference `json:"gitProviderRef"`

	// Branch to write: a valid Git branch name (git check-ref-format). It must match one of
	// the GitProvider's allowedBranches. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.branch is immutable; create a new GitTarget for another branch"
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'[\\x00-\\x20\\x7f~^:?*\\[\\\\]') && !self.contains('..') && !self.contains('@{') && !self.contains('//') && !self.startsWith('/') && !self.endsWith('/') && !self.endsWith('.') && !self.matches('(^|/)[.]') && !self.matches('[.]lock(/|$)') && self != '@' && self != 'HEAD' && !self.startsWith('-') && !self.startsWith('refs/')",message="spec.branch must be a valid Git branch name, given without refs/heads/: no spaces, control characters, ~ ^ : ? * [ \\, '..', '@{' or '//'; no part starting with '.' or ending with '.lock'; not HEAD, not starting with '-', '/' or 'refs/', not ending with '/' or '.'"
	Branch string `json:"branch"`

	// Path of the folder in the repository that this target owns: relative, without ".."
	// segments; "." is the repository root. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.path is immutable; create a new GitTarget for another folder"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/')",message="spec.path must be relative to the repository root: remove the leading '/'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.](/|$)')",message="spec.path must not contain a '..' segment"
	Path string `json:"path"`

	// Encryption configures how sensitive objects (Secrets) are encrypted before they are
	// written. Without it, Secrets are not written.
	// +optional
	Encryption *EncryptionSpec `json:"encryption,omitempty"`

	// Prune says which deletions of live objects delete documents from Git.
	// +optional
	Prune PruneSpec `json:"prune,omitempty"`

	// Placement chooses the file of a new document. Existing documents are edited where
	// they are.
	// +optional
	Placement *PlacementSpec `json:"placement,omitempty"`

	// Write says what the documents of new objects hold.
	// +optional
	Write WriteSpec `json:"write,omitempty"`

	// ApplyTriggerRef names the trigger through which a GitOps applier (Flux, Argo CD) applies this
	// target's folder: the operator then coordinates with it instead of racing it
	// (docs/two-way.md).
	// +optional
	ApplyTriggerRef *ApplyTriggerReference `json:"applyTriggerRef,omitempty"`

	// OnRefusal says what happens to a live object whose change the folder refuses: Ignore
	// (the default) reports it; Reapply, which needs applyTriggerRef, asks the applier to
	// put the cluster back to what Git holds.
	// +optional
	// +kubebuilder:default=Ignore
	OnRefusal RefusalPolicy `json:"onRefusal,omitempty"`
}

// GitProviderReference names a GitProvider, in this namespace unless Namespace is set.
type GitProviderReference struct {
	// Name of the GitProvider.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the GitProvider; defaults to the GitTarget's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// EncryptionSpec configures SOPS encryption of sensitive documents.
type EncryptionSpec struct {
	// Provider of the encryption. Only sops is supported.
	// +kubebuilder:validation:Enum=sops
	Provider string `json:"provider"`

	// Age lists the age recipients the documents are encrypted to.
	Age AgeSpec `json:"age"`
}

// AgeSpec lists age recipients (public keys only).
// +kubebuilder:validation:XValidation:rule="!has(self.generateKeyPair) || !self.generateKeyPair || has(self.recipientsSecretRef)",message="generateKeyPair needs recipientsSecretRef: the Secret the key pair is written to"
type AgeSpec struct {
	// Recipients are age public keys (age1...).
	// +optional
	// +kubebuilder:validation:items:Pattern=`^age1[0-9a-z]+$`
	Recipients []string `json:"recipients,omitempty"`

	// RecipientsSecretRef names a Secret in this namespace whose values are age public
	// keys, one or more per value, added to Recipients.
	// +optional
	RecipientsSecretRef *LocalObjectReference `json:"recipientsSecretRef,omitempty"`

	// GenerateKeyPair asks the operator to create the Secret named by RecipientsSecretRef,
	// when it does not exist, with a new age key pair: `identity.agekey` (the private key,
	// which decrypts the Secrets in Git: back it up outside the cluster) and `recipient`
	// (the public key). The operator never generates keys unless asked here.
	// +optional
	GenerateKeyPair bool `json:"generateKeyPair,omitempty"`
}

// PruneSpec configures deletion.
type PruneSpec struct {
	// Mode is Never, OnEvent (the default) or Always.
	// +optional
	// +kubebuilder:default=OnEvent
	Mode PruneMode `json:"mode,omitempty"`
}

// MirrorProgress is how far a GitTarget's first mirror has come.
type MirrorProgress struct {
	// Phase is Waiting (no object listed yet), Writing (the listed objects are written
	// into the folder), Pushing (committed, not yet on the remote) or Mirrored.
	// +optional
	Phase string `json:"phase,omitempty"`
	// ObjectsSeen is the number of objects the first listing found.
	// +optional
	ObjectsSeen int64 `json:"objectsSeen,omitempty"`
	// ObjectsWritten is how many of them are in the folder's next commit so far.
	// +optional
	ObjectsWritten int64 `json:"objectsWritten,omitempty"`
}

// DefaultsPolicy says whether the document of an object that has none in Git yet holds the
// values the API server filled in by itself.
// +kubebuilder:validation:Enum=Omit;Keep
type DefaultsPolicy string

const (
	// DefaultsOmit writes the smallest document the API server turns into the live object.
	DefaultsOmit DefaultsPolicy = "Omit"
	// DefaultsKeep writes the live object as it is, server defaults included.
	DefaultsKeep DefaultsPolicy = "Keep"
)

// WriteSpec configures the documents written for new objects.
type WriteSpec struct {
	// Defaults is Omit (the default): an object created through the API is written without
	// the values the API server fills in by itself, as the API server itself tells
	// (server-side dry-runs, never persisted); or Keep: as the live object holds them.
	// Documents already in Git keep the fields they have either way.
	// +optional
	// +kubebuilder:default=Omit
	Defaults DefaultsPolicy `json:"defaults,omitempty"`
}

// PlacementSpec holds path templates for new documents. Templates may use {name},
// {namespace}, {namespaceOrCluster}, {group}, {version}, {resource} and {kind}.
type PlacementSpec struct {
	// Default is the template for any type without a byType entry.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Default string `json:"default,omitempty"`

	// ByType maps "[group/]version/resource" to a template.
	// +optional
	ByType map[string]string `json:"byType,omitempty"`
}

// GitTargetStatus reports the state of the mirror.
type GitTargetStatus struct {
	CommonStatus `json:",inline"`

	// LastCommit is the last commit the operator pushed for this target.
	// +optional
	LastCommit string `json:"lastCommit,omitempty"`

	// LastPushTime is when that commit was pushed.
	// +optional
	LastPushTime *metav1.Time `json:"lastPushTime,omitempty"`

	// RetainedDocuments counts documents kept in Git although their object is gone,
	// because the prune mode suppressed the sweep that would have deleted them.
	// +optional
	RetainedDocuments int64 `json:"retainedDocuments,omitempty"`

	// Progress is how far the target's first mirror has come: after the target is set, and
	// after each start of the operator, its objects are listed and written into the folder
	// once.
	// +optional
	Progress *MirrorProgress `json:"progress,omitempty"`
}

// GitTarget is a folder of a repository branch that mirrors live objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="Branch",type=string,JSONPath=`.spec.branch`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.progress.phase`
// +kubebuilder:printcolumn:name="Written",type=integer,priority=1,JSONPath=`.status.progress.objectsWritten`
// +kubebuilder:printcolumn:name="Seen",type=integer,priority=1,JSONPath=`.status.progress.objectsSeen`
// +kubebuilder:printcolumn:name="RenderMatchesLive",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="RenderMatchesLive")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GitTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says where the mirror is written.
	Spec GitTargetSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status GitTargetStatus `json:"status,omitempty"`
}

// GitTargetList is a list of GitTargets.
//
// +kubebuilder:object:root=true
type GitTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GitTarget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GitTarget{}, &GitTargetList{})
}
