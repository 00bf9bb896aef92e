package controller

// Reasons of the conditions this package sets, besides the API's own (v1alpha1.Reason*).
const (
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonSecretInvalid       = "SecretInvalid"
	ReasonRemoteUnreachable   = "RemoteUnreachable"
	ReasonSigningKeyInvalid   = "SigningKeyInvalid"
	ReasonProviderNotReady    = "ProviderNotReady"
	ReasonReady               = "Ready"
	ReasonStreamsStarting     = "StreamsStarting"
	ReasonResourcesUnresolved = "ResourcesUnresolved"
	ReasonTargetNotFound      = "TargetNotFound"
	ReasonTargetNotReady      = "TargetNotReady"
	ReasonWorkerFailed        = "WorkerFailed"
	ReasonWorkerBusy          = "WorkerBusy"
	ReasonPushFailing         = "PushFailing"
	ReasonPushed              = "Pushed"
	ReasonNothingPending      = "NothingPending"
	ReasonPushFailed          = "PushFailed"
	ReasonAttributionOff      = "AttributionOff"
	ReasonAttributed          = "Attributed"
	ReasonWaitingForBranch    = "WaitingForBranch"
	ReasonRenderMatchesLive   = "RenderMatchesLive"
	ReasonRechecking          = "Rechecking"
	ReasonOwnershipUnknown    = "OwnershipUnknown"
	ReasonWritesHeld          = "WritesHeld"
	ReasonAuthorUnresolved    = "AuthorUnresolved"
)
