# The date-stamped corpus (documents, entity validity, restatement links) and its BM25 index,
# searched by the retrieval methods (rag with the as-of filter, rag_unrestricted without it).


rule build_corpus:
    input:
        unpack(corpus_inputs),
    output:
        documents="results/corpus/documents.parquet",
        entities="results/corpus/entities.parquet",
        index=directory("results/corpus/bm25"),
        report="results/corpus/report.json",
    conda:
        "../../environment.yml"
    log:
        "logs/build_corpus.log",
    benchmark:
        "benchmarks/out/build_corpus.tsv"
    script:
        "../scripts/build_corpus.py"
