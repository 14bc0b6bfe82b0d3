module flaggerrender

go 1.19
