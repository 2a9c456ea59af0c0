app_name = "reflect"
urlpatterns = []
