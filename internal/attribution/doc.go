// Package attribution names the author of each mirrored change from kube-apiserver audit
// events (SPEC section 7, T1–T5).
//
// kube-apiserver posts audit.k8s.io/v1 EventLists to the webhook (Handler, served by
// Server at /audit-webhook). An accept gate keeps only complete, successful, persisted
// mutations (T2); each kept event becomes a minimal Fact in an in-process Index that is
// bounded in count and age. The stream side calls Index.Resolve for each watch event: it
// waits up to a grace for the event's fact and joins it by (uid, resourceVersion), then
// uid, then namespace/name, then deletecollection scope (T3), returning the Author and the
// Tier used. Without a fact in time the author is Unresolved (T4). Audit never creates,
// changes or deletes a document; it only names authors. See docs/attribution.md.
package attribution
