//go:build e2e

package controller_test

import "encoding/base64"

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
