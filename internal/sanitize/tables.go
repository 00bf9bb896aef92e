package sanitize

// metadataKept lists the only metadata fields a written document holds. Everything else in
// metadata (uid, resourceVersion, generation, creationTimestamp, deletionTimestamp,
// deletionGracePeriodSeconds, selfLink, managedFields, ownerReferences, finalizers,
// generateName, …) is bookkeeping of the API server or of controllers. An allowlist rather
// than a denylist, so that a metadata field added by a future Kubernetes release is not
// mirrored by accident.
var metadataKept = [...]string{"name", "namespace", "labels", "annotations"}

// droppedTopLevel lists top-level fields that are never content.
var droppedTopLevel = [...]string{"status"}

// droppedAnnotations are removed by exact key.
var droppedAnnotations = [...]string{
	// Written by `kubectl apply` (client-side): a copy of the object, not a user setting.
	"kubectl.kubernetes.io/last-applied-configuration",
	// Argo CD's resource tracking; the application that applies the object, not content.
	"argocd.argoproj.io/tracking-id",
	"argocd.argoproj.io/installation-id",
	// Our own digest of a sealed Secret's plaintext: an applier that decrypts the file
	// applies it with the Secret; it belongs to the file, not to the object.
	"gitops-reverser.io/sealed-digest",
	// Leader election records stored on Endpoints/ConfigMaps by older clients; they change
	// every few seconds.
	"control-plane.alpha.kubernetes.io/leader",
	// A timestamp the endpoints controller writes.
	"endpoints.kubernetes.io/last-change-trigger-time",
	// Written by the PersistentVolume binder and the provisioners.
	"pv.kubernetes.io/bind-completed",
	"pv.kubernetes.io/bound-by-controller",
	"pv.kubernetes.io/provisioned-by",
	"volume.beta.kubernetes.io/storage-provisioner",
	"volume.kubernetes.io/storage-provisioner",
	"volume.kubernetes.io/selected-node",
}

// droppedAnnotationPrefixes are removed by key prefix.
var droppedAnnotationPrefixes = [...]string{
	// deployment.kubernetes.io/revision, desired-replicas, max-replicas: the deployment
	// controller's counters.
	"deployment.kubernetes.io/",
	// Flux's applier bookkeeping (checksums, ownership, reconcile requests).
	"kustomize.toolkit.fluxcd.io/",
	"helm.toolkit.fluxcd.io/",
	// kubectl ApplySet bookkeeping.
	"applyset.kubernetes.io/",
}

// droppedLabelPrefixes are removed by key prefix. app.kubernetes.io/instance is deliberately
// kept: it is a recommended user label even when Argo CD also uses it for tracking.
var droppedLabelPrefixes = [...]string{
	"kustomize.toolkit.fluxcd.io/",
	"helm.toolkit.fluxcd.io/",
	"applyset.kubernetes.io/",
}

// boundByControllerAnnotation marks a PersistentVolumeClaim whose spec.volumeName the
// binder filled in (as opposed to a claim a person pre-bound to a volume).
const boundByControllerAnnotation = "pv.kubernetes.io/bound-by-controller"
