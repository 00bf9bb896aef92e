// Package attribution names the author of each mirrored change from kube-apiserver audit
// events (docs/attribution.md).
//
// kube-apiserver posts audit.k8s.io/v1 EventLists to the webhook (Handler, served by Server
// at /audit-webhook). An accept gate keeps only complete, successful, persisted mutations
// (docs/attribution.md#the-accept-gate); each kept event becomes a minimal Fact in an
// in-process Index that is bounded in count and age. The stream side calls Index.Resolve
// for each watch event: it waits up to a grace for the event's fact and joins it by (uid,
// resourceVersion), then uid, then namespace/name, then deletecollection scope
// (docs/attribution.md#the-join), returning the Author and the Tier used. Without a fact in
// time the author is Unresolved (docs/attribution.md#authors). Audit never creates, changes
// or deletes a document; it only names authors. See docs/attribution.md.
package attribution
