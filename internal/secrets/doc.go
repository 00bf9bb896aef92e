// Package secrets seals sanitized Kubernetes documents (Secrets, and other types configured
// as sensitive) into SOPS documents encrypted for age recipients, in process, with SOPS's and
// age's Go packages. Nothing here writes to disk, runs a program or logs.
//
// A sealed document keeps apiVersion, kind and metadata readable (the writer indexes documents
// by identity) and encrypts the values of data and stringData (for other kinds: every
// top-level field except apiVersion, kind and metadata). It carries, in clear and covered by
// the SOPS MAC, the annotation DigestAnnotation: a keyed HMAC-SHA256 of the canonical
// plaintext, so an unchanged object can be recognised without decrypting and without new
// ciphertext. See docs/secrets.md.
//
// Plaintext hygiene: no function logs, and no error message contains a value of the
// document (errors name fields, indexes and line numbers only). Byte slices this package
// owns that hold plaintext or key material (canonical digest input, the SOPS data key, the
// digest key on Close) are zeroed after use; strings cannot be zeroed in Go, and the YAML
// and SOPS trees hold values as strings until the garbage collector reclaims them.
package secrets
