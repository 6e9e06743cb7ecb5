module github.com/rpcctl/rpcctl/clients/go

go 1.19
