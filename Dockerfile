# The operator image: a static binary on distroless, as user 65532 (nonroot).
#   make image IMG=registry.example.com/gitops-reverser:v0.1.0
FROM golang:1.26 AS builder
ARG VERSION=dev
WORKDIR /src
# Dependencies first, so that a source change reuses the module download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
# The same build as `make build`, without cgo so that the binary runs on a static base.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gitops-reverser ./cmd/gitops-reverser

FROM gcr.io/distroless/static:nonroot
COPY --from=builder /out/gitops-reverser /gitops-reverser
USER 65532:65532
ENTRYPOINT ["/gitops-reverser"]
CMD ["run"]
