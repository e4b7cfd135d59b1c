module example.com/lspws

go 1.26
