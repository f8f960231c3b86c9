module cblab/kit

go 1.18
