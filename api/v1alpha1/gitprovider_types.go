package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Keys read from the Secret named by GitProvider.spec.secretRef.
const (
	SecretKeyUsername      = "username"
	SecretKeyPassword      = "password"
	SecretKeyBearerToken   = "bearerToken"
	SecretKeySSHPrivateKey = "ssh-privatekey"
	SecretKeyKnownHosts    = "known_hosts"
	// SecretKeyCABundle holds the PEM CA certificates that verify an https:// server.
	SecretKeyCABundle = "ca.crt"
)

// GitProviderSpec says which repository to write, with which credentials and identity.
type GitProviderSpec struct {
	// URL of the repository: https://, http://, ssh:// or the scp-like user@host:path
	// form (file:// is refused: it would reach the operator's own files, other targets'
	// local copies included). Immutable: create a new GitProvider to write somewhere else.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.url is immutable; create a new GitProvider for another repository"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?i)(https?|ssh)://[^ ]+$') || self.matches('^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^ ]+$')",message="spec.url must be an https://, http://, ssh:// or user@host:path URL (file:// is not supported)"
	URL string `json:"url"`

	// Insecure allows credentials to be sent over plain http:// to a host that is not a
	// loopback address, where anyone on the way can read them. Without it such a URL is
	// refused with a condition that says why; use https:// instead.
	// +optional
	Insecure bool `json:"insecure,omitempty"`

	// SecretRef names a Secret in this namespace holding the credentials: username and
	// password, or bearerToken, for HTTP(S), with an optional ca.crt (PEM) for a server
	// whose certificate a private CA signs; ssh-privatekey and known_hosts for SSH.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// AllowedBranches lists the branches GitTargets may write, as globs (main, release-*).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	AllowedBranches []string `json:"allowedBranches"`

	// Commit sets the committer identity, message templates and optional signing.
	// +optional
	Commit CommitSpec `json:"commit,omitempty"`

	// Push sets how changes are grouped into commits and pushed.
	// +optional
	Push PushSpec `json:"push,omitempty"`

	// AccessFrom lists the other namespaces whose GitTargets may use this GitProvider.
	// The GitProvider's own namespace is always admitted.
	// +optional
	AccessFrom *NamespaceMatcher `json:"accessFrom,omitempty"`
}

// CommitSpec configures the commits the operator makes.
type CommitSpec struct {
	// Committer is the identity recorded as committer on every commit. Defaults to
	// "GitOps Reverser <noreply@gitops-reverser.io>".
	// +optional
	Committer *Identity `json:"committer,omitempty"`

	// Message holds Go templates for commit messages.
	// +optional
	Message *CommitMessageSpec `json:"message,omitempty"`

	// Signing, when set, signs every commit with an SSH key.
	// +optional
	Signing *SigningSpec `json:"signing,omitempty"`
}

// Identity is a Git name and email.
type Identity struct {
	// Name is the Git user name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	// Email is the Git user email.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Email string `json:"email"`
}

// CommitMessageSpec holds the Go templates used to write commit messages.
type CommitMessageSpec struct {
	// Template renders the message of a commit made from a closed window. It sees
	// .Author, .GitTarget, .Count, .Summary (what changed: "update ConfigMap demo/app",
	// "create 3, update 2 in demo"), .Changes (the first 1,000, each with .Operation —
	// create, update, delete or prune — .Object, .Kind, .Namespace, .Name and .Path) and
	// .Omitted (how many more changes the commit holds).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Template string `json:"template,omitempty"`

	// ResyncTemplate renders the message of a commit made from a snapshot (resync). It sees
	// the same fields as Template.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	ResyncTemplate string `json:"resyncTemplate,omitempty"`
}

// SigningSpec configures SSH commit signing.
type SigningSpec struct {
	// SecretRef names a Secret in this namespace whose ssh-privatekey signs commits.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// PushSpec configures commit windows and pushes.
type PushSpec struct {
	// CommitWindow is how long one author's changes to one GitTarget may be silent before
	// they are committed together. A Go duration such as 5s; 0s commits every event on its
	// own. Defaults to 5s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+)$')",message="spec.push.commitWindow must be a non-negative duration such as 5s, 500ms or 0s"
	CommitWindow *metav1.Duration `json:"commitWindow,omitempty"`
}

// GitProviderStatus reports whether the repository can be reached and written.
type GitProviderStatus struct {
	CommonStatus `json:",inline"`

	// SigningPublicKey is the public half of the signing key, in authorized_keys form, to
	// register with the Git host so that signatures verify.
	// +optional
	SigningPublicKey string `json:"signingPublicKey,omitempty"`
}

// GitProvider is a Git repository the operator may write, with its credentials.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=gitops-reverser
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GitProvider struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which repository to write and how.
	Spec GitProviderSpec `json:"spec"`

	// Status is written by the operator.
	// +optional
	Status GitProviderStatus `json:"status,omitempty"`
}

// GitProviderList is a list of GitProviders.
//
// +kubebuilder:object:root=true
type GitProviderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GitProvider `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GitProvider{}, &GitProviderList{})
}
