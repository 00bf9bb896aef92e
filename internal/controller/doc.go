// Package controller holds the reconcilers of the API's kinds. They validate, wire the
// pipeline (branch workers, watch streams, routes) and report status; the pipeline does the
// work. Conditions carry a reason and a message a person can act on.
package controller
