module arena-starter-go

go 1.19
