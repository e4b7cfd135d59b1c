// Package kubecheck checks the manifests of rpcload kubernetes against the
// real Kubernetes API: every document is decoded strictly (unknown fields
// refused) into k8s.io/api's types (and the Prometheus Operator's, for the
// PodMonitor), every pod is judged by the Pod Security admission's own
// checks at the restricted level, and the objects must fit together: the
// Service selects the shard pods, the shards' DNS names are the merge's
// --from list, N is the same everywhere. It is a module of its own, as
// interop/ is, so that rpcload's module does not carry the Kubernetes API.
// It has tests only.
package kubecheck
