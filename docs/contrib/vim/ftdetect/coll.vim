" .coll files are collc's schedule language
autocmd BufRead,BufNewFile *.coll setfiletype coll
