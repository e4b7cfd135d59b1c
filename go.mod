module github.com/rpcload/rpcload

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.3.0
	github.com/gorilla/websocket v1.5.3
	github.com/spf13/pflag v1.1.0
	golang.org/x/time v0.16.0
)
