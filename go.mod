module github.com/rpcload/rpcload

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.3.0
	github.com/gorilla/websocket v1.5.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/spf13/pflag v1.1.0
	go.yaml.in/yaml/v3 v3.0.6
)

require golang.org/x/text v0.14.0 // indirect
