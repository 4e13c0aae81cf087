import sys

from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions

# Retrieve job parameters
args = getResolvedOptions(
    sys.argv,
    ["JOB_NAME"]
)

# Initialize Spark and Glue
sc = SparkContext.getOrCreate()
glue_context = GlueContext(sc)

# Initialize job bookmark state
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

# Read data from Glue Data Catalog
source = glue_context.create_dynamic_frame.from_catalog(
    database="sales_db",
    table_name="orders_raw",
    transformation_ctx="orders_source"
)

# Write output to Amazon S3
glue_context.write_dynamic_frame.from_options(
    frame=source,
    connection_type="s3",
    connection_options={
        "path": "s3://your-output-bucket/sales/"
    },
    format="parquet",
    transformation_ctx="orders_sink"
)

# Save bookmark state
job.commit()
