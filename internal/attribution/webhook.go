package attribution

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/go-logr/logr"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Path is where kube-apiserver posts audit events.
const Path = "/audit-webhook"

// DefaultMaxBodyBytes bounds one request's body (kube-apiserver's default batch of 400
// events at RequestResponse level fits well inside it).
const DefaultMaxBodyBytes = 8 << 20

// Handler receives audit.k8s.io/v1 EventLists, keeps the facts of the events the gate
// accepts in the index and answers 200. A request is all or nothing: a body that is not a
// complete EventList (bad JSON, too large) is refused and none of its events is kept.
type Handler struct {
	index    *Index
	gate     Gate
	maxBody  int64
	log      logr.Logger
	counters *Counters
}

// NewHandler returns the webhook handler; maxBody <= 0 means DefaultMaxBodyBytes.
func NewHandler(idx *Index, gate Gate, maxBody int64, log logr.Logger) *Handler {
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	return &Handler{index: idx, gate: gate, maxBody: maxBody, log: log, counters: idx.Counters()}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.counters.refuse(RefusedMethod)
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > h.maxBody {
		h.tooLarge(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.tooLarge(w, r)
			return
		}
		h.counters.refuse(RefusedBadJSON)
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var list auditv1.EventList
	if err := json.Unmarshal(body, &list); err != nil {
		h.counters.refuse(RefusedBadJSON)
		h.log.V(1).Info("audit webhook: refused a body that is not JSON", "error", err.Error())
		http.Error(w, "not an audit EventList: "+err.Error(), http.StatusBadRequest)
		return
	}
	if list.Kind != "EventList" || (list.APIVersion != "audit.k8s.io/v1" && list.APIVersion != "") {
		h.counters.refuse(RefusedBadJSON)
		http.Error(w, "not an audit.k8s.io/v1 EventList", http.StatusBadRequest)
		return
	}
	body = nil
	facts := make([]*Fact, 0, len(list.Items))
	for i := range list.Items {
		ev := &list.Items[i]
		if ok, reason := h.gate.Check(ev); !ok {
			h.counters.ignore(reason)
			continue
		}
		facts = append(facts, factOf(ev))
	}
	h.index.Add(facts...)
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) tooLarge(w http.ResponseWriter, r *http.Request) {
	h.counters.refuse(RefusedTooLarge)
	h.log.Info("audit webhook: refused a body above the limit", "limit", h.maxBody, "contentLength", r.ContentLength)
	// Do not drain what is left: close the connection instead.
	w.Header().Set("Connection", "close")
	http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
}
