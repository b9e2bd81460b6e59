-- wrk script: GET one path with the API token (env OLV_TOKEN)
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("OLV_TOKEN")
