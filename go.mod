module github.com/graphferry/graphferry

go 1.26.8

require (
	github.com/apache/arrow/go/v14 v14.0.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)
